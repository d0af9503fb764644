/**
 * Structured JSON logs: a fixed message plus fields. Anything that could carry a secret is
 * redacted by path, wherever it appears, so a careless field never leaks a token.
 */
import { pino, type Logger, type LevelWithSilent } from 'pino';

export const REDACT_PATHS = [
  'token',
  'password',
  'secret',
  'authorization',
  'webhookSecret',
  '*.token',
  '*.password',
  '*.secret',
  '*.authorization',
  '*.Authorization',
  '*.webhookSecret',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers["x-gitlab-token"]',
  'req.headers["x-hub-signature-256"]',
];

export function createLogger(level: LevelWithSilent = 'info', destination?: NodeJS.WritableStream): Logger {
  const opts = {
    level,
    base: { app: 'drydock', pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(opts, destination as unknown as pino.DestinationStream) : pino(opts);
}
