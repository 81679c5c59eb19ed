/** Structured logs (pino), one root logger per process; modules take children of it. */
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: pino.LevelWithSilent, name = 'sentinel'): Logger {
  return pino({
    name,
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['req.headers.authorization', '*.apiKey', '*.password', '*.secret', '*.value', 'headers.authorization'],
      censor: '[redacted]',
    },
  });
}
