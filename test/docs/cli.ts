/**
 * docs/reference/cli.md from the commander program the `drydock` binary runs
 * (src/cli/main.ts's buildProgram): every command with its arguments, every option with its
 * flags, environment variable, default and choices, and the text each adds after its help.
 */
import type { Argument, Command, Option } from 'commander';
import { buildProgram } from '../../src/cli/main.js';
import { code, generatedNote, table } from './markdown.js';

function defaultOf(value: unknown, description: string | undefined): string {
  if (description) return description;
  if (value === undefined || value === '') return '';
  return code(typeof value === 'string' ? value : JSON.stringify(value));
}

function optionRow(o: Option): string[] {
  const notes: string[] = [];
  if (o.argChoices) notes.push(`one of ${o.argChoices.map(code).join(', ')}`);
  if (o.mandatory) notes.push('required');
  if (o.hidden) notes.push('not shown by `--help`');
  const description = [o.description, ...(notes.length > 0 ? [`(${notes.join('; ')})`] : [])].join(' ');
  return [
    code(o.flags),
    o.envVar ? code(o.envVar) : '',
    defaultOf(o.defaultValue, o.defaultValueDescription),
    description,
  ];
}

function argumentRow(a: Argument): string[] {
  const name = a.name();
  const shown = a.required ? `<${name}>` : `[${name}]`;
  return [code(shown), a.required ? 'yes' : '', defaultOf(a.defaultValue, a.defaultValueDescription), a.description];
}

/** What a command prints after its generated help (`addHelpText('after', …)`), if anything. */
function helpAfter(command: Command): string {
  let out = '';
  command.configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (out += s), getOutHelpWidth: () => 1000 });
  command.outputHelp();
  const generated = command.helpInformation();
  return out.startsWith(generated) ? out.slice(generated.length).trim() : '';
}

function commandSection(program: Command, command: Command): string {
  const usage = `${program.name()} ${command.name()} ${command.usage()}`.trim();
  const lines = [
    `## ${program.name()} ${command.name()}`,
    '',
    `${command.description()}.`,
    '',
    '```text',
    usage,
    '```',
  ];
  if (command.registeredArguments.length > 0)
    lines.push(
      '',
      table(['Argument', 'Required', 'Default', 'Description'], command.registeredArguments.map(argumentRow)),
    );
  if (command.options.length > 0)
    lines.push('', table(['Option', 'Environment', 'Default', 'Description'], command.options.map(optionRow)));
  const after = helpAfter(command);
  if (after) lines.push('', '```text', after, '```');
  return lines.join('\n');
}

export function cliPage(): { markdown: string; commands: number; options: number } {
  const program = buildProgram(() => undefined);
  const commands = [...program.commands];
  const sections = commands.map((c) => commandSection(program, c));
  const options = commands.reduce((n, c) => n + c.options.length, 0);
  const markdown = [
    generatedNote('src/cli/ (the commander program of src/cli/main.ts)'),
    '',
    '# Command line',
    '',
    `${code(program.name())}, ${program.description()}: ${commands.length} commands and ${options} options. An option with an environment variable takes its value from it when the flag is not given; the flag wins. Every command exits 0 when it succeeded, 1 when it found problems and 2 on a usage or runtime error; \`${program.name()} <command> --help\` prints the same as below.`,
    '',
    table(
      ['Command', 'What it does'],
      commands.map((c) => [
        `[${code(`${program.name()} ${c.name()}`)}](#${program.name()}-${c.name()})`,
        c.description(),
      ]),
    ),
    '',
    ...sections.flatMap((s) => [s, '']),
  ].join('\n');
  return { markdown, commands: commands.length, options };
}
