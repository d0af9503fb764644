/**
 * Parsing of the service's command-line values, with errors that say which flag, what was
 * wrong and what to write instead.
 */
import { CodedError } from '../errors.js';
import type { CloudProvider } from '../cloud/provider.js';
import { createProvider, ProviderConfigError } from '../cloud/index.js';
import type { Provider } from '../spec/model.js';
import { parseDuration as parseDurationMs } from '../duration.js';

export class OptionError extends CodedError<'option', { readonly flag: string; readonly value?: string }> {
  override readonly name = 'OptionError';
  constructor(message: string, data: { readonly flag: string; readonly value?: string }) {
    super('option', message, data);
  }
}

/** "30s", "2m", "1h", "500ms" or a bare number of seconds → milliseconds. */
export function parseDuration(flag: string, value: string): number {
  const ms = parseDurationMs(value);
  if (ms === undefined)
    throw new OptionError(`${flag} ${JSON.stringify(value)} is not a duration; write e.g. 30s, 2m or 1h`, {
      flag,
      value,
    });
  if (!Number.isFinite(ms) || ms <= 0) throw new OptionError(`${flag} must be longer than zero`, { flag, value });
  return Math.round(ms);
}

/**
 * `DRYDOCK_TEST_CLOCK_OFFSET`: a signed duration ("2h", "-30m") added to every clock reading
 * of the service, so the reliability suite can make time jump across a restart (a window
 * that opens and closes while drydock is down). Unset: 0.
 */
export const CLOCK_OFFSET_ENV = 'DRYDOCK_TEST_CLOCK_OFFSET';

export function parseClockOffset(value: string | undefined): number {
  if (value === undefined || value === '') return 0;
  const negative = value.startsWith('-');
  const ms = parseDurationMs(negative ? value.slice(1) : value);
  if (ms === undefined || !Number.isFinite(ms)) {
    throw new OptionError(`${CLOCK_OFFSET_ENV} ${JSON.stringify(value)} is not a duration; write e.g. 2h or -30m`, {
      flag: CLOCK_OFFSET_ENV,
      value,
    });
  }
  return Math.round(negative ? -ms : ms);
}

/** Commander's boolean-ish env values: true/false/1/0/yes/no. */
export function parseBool(flag: string, value: string | boolean): boolean {
  if (typeof value === 'boolean') return value;
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new OptionError(`${flag} ${JSON.stringify(value)} is not true or false`, { flag, value });
}

/**
 * The providers the service can reach, from --provider and --cloud-endpoint. A cluster without
 * a cloud (Kairos, bare metal) needs none: the sim provider without its endpoint is no provider,
 * and a ScalingGroup that needs one says so in status (observe/cloud.ts).
 */
export function providersFrom(
  provider: string,
  endpoint: string | undefined,
): Partial<Record<Provider, CloudProvider>> {
  if (provider !== 'sim' && provider !== 'aws' && provider !== 'gcp' && provider !== 'azure') {
    throw new OptionError(`--provider ${JSON.stringify(provider)} is not one of sim, aws, gcp, azure`, {
      flag: '--provider',
      value: provider,
    });
  }
  try {
    if (provider === 'sim') {
      if (!endpoint) return {};
      let url: URL;
      try {
        url = new URL(endpoint);
      } catch {
        throw new OptionError(
          `--cloud-endpoint ${JSON.stringify(endpoint)} is not a URL; write e.g. http://127.0.0.1:7070`,
          { flag: '--cloud-endpoint', value: endpoint },
        );
      }
      return { sim: createProvider({ provider: 'sim', url: url.toString().replace(/\/$/, '') }) };
    }
    return { [provider]: createProvider({ provider }) };
  } catch (err) {
    if (err instanceof ProviderConfigError) throw new OptionError(err.message, { flag: '--provider', value: provider });
    throw err;
  }
}
