/**
 * Shared helpers of the payload engines: decoding the subject, format hints, bounded excerpts.
 * Every excerpt leaving a payload engine goes through `safeExcerpt`/`maskSecrets`, so a secret
 * that happens to sit inside quoted code, a prompt or a tool argument is never echoed raw.
 */
import { performance } from 'node:perf_hooks';
import { SEVERITY_RANK, type EngineContext, type ScanSubject, type Severity } from '../../types';
import { maskSecrets } from './secrets';
import { EngineTimeoutError } from '../../runner';

/** The maximum decoded payload size (docs/contract.md §5 "Scan requests"). Anything beyond is not looked at. */
export const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
/** Persisted excerpt fields are capped at about 200 characters. */
export const MAX_EXCERPT = 200;

const textCache = new WeakMap<Buffer, string>();

/** The payload as UTF-8 text (decoded once per buffer and shared by the four engines). */
export function payloadText(subject: ScanSubject): string {
  const cached = textCache.get(subject.content);
  if (cached !== undefined) return cached;
  const buf = subject.content.length > MAX_PAYLOAD_BYTES
    ? subject.content.subarray(0, MAX_PAYLOAD_BYTES)
    : subject.content;
  const text = buf.toString('utf8');
  textCache.set(subject.content, text);
  return text;
}

/** Lower-case extension of a payload label (".py" -> "py"), or "" when it has none. */
export function extensionOf(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  if (dot <= 0 || dot === base.length - 1) return '';
  const ext = base.slice(dot + 1).toLowerCase();
  return /^[a-z0-9]{1,8}$/.test(ext) ? ext : '';
}

/**
 * Lower-cases without changing length, so offsets found in the result index the original.
 * (String#toLowerCase can grow a few characters such as U+0130.)
 */
export function lowerSameLength(text: string): string {
  const lower = text.toLowerCase();
  if (lower.length === text.length) return lower;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const l = text[i].toLowerCase();
    out += l.length === 1 ? l : text[i];
  }
  return out;
}

/** Collapses whitespace and cuts to `max` characters. */
export function clip(s: string, max = MAX_EXCERPT): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length <= max ? one : `${one.slice(0, max - 1)}…`;
}

/**
 * A short quote of text[start, end) with some surrounding context, secrets masked.
 * The masking looks at a wider window so a secret cut by the window edge is still recognised.
 */
export function safeExcerpt(text: string, start: number, end: number, context = 40, max = MAX_EXCERPT): string {
  const s = Math.max(0, start - context);
  const e = Math.min(text.length, Math.max(end, start) + context, s + max + 40);
  const wideStart = Math.max(0, s - 300);
  const wideEnd = Math.min(text.length, e + 300);
  const masked = maskSecrets(text.slice(wideStart, wideEnd));
  return clip(masked.slice(s - wideStart, e - wideStart), max);
}

export function maxSeverity(list: Severity[]): Severity | undefined {
  let best: Severity | undefined;
  for (const s of list) if (best === undefined || SEVERITY_RANK[s] > SEVERITY_RANK[best]) best = s;
  return best;
}

/** What the analysis loops poll; an AbortSignal is one. */
export interface BudgetSignal {
  readonly aborted: boolean;
}

/**
 * The engine context's signal plus a wall-clock deadline. The payload engines are synchronous
 * CPU work, so the runner's abort timer cannot fire while they run; polling the clock lets a
 * huge payload stop at its budget instead of running past it.
 */
export function deadlineSignal(ctx: EngineContext): BudgetSignal {
  const at = performance.now() + ctx.budgetMs;
  return {
    get aborted(): boolean {
      return ctx.signal.aborted || performance.now() > at;
    },
  };
}

/** Throws when the engine's time budget is spent, so the runner records a timeout. */
export function checkBudget(signal: BudgetSignal | undefined): void {
  if (signal?.aborted) throw new EngineTimeoutError('payload engine: time budget exhausted');
}
