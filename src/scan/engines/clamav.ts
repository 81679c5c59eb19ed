/**
 * ClamAV signatures through clamd's INSTREAM command over TCP: the content goes in chunks, each
 * preceded by its length as a 4-byte big-endian integer, ended by a zero-length chunk. clamd
 * answers "stream: OK", "stream: <signature> FOUND" or "... ERROR".
 * When clamd cannot be reached the engine says so (status 'unavailable'); it never reports clean.
 */
import net from 'node:net';
import type { Engine, EngineContext, EngineOutput, Finding, ScanSubject } from '../types';
import { EngineUnavailableError } from '../runner';

export interface ClamdAddress {
  host: string;
  port: number;
}

const CHUNK = 64 * 1024;
const CONNECT_TIMEOUT_MS = 2000;

export type ClamdReply = { clean: true } | { clean: false; signature: string };

function connect(addr: ClamdAddress, signal?: AbortSignal): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection({ host: addr.host, port: addr.port });
    const fail = (err: Error & { code?: string }): void => {
      socket.destroy();
      reject(new EngineUnavailableError(`clamd not reachable at ${addr.host}:${addr.port} (${err.code ?? err.message})`));
    };
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => fail(Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' })));
    socket.once('error', fail);
    socket.once('connect', () => {
      socket.setTimeout(0);
      socket.removeListener('error', fail);
      resolve(socket);
    });
    signal?.addEventListener('abort', () => socket.destroy(), { once: true });
  });
}

/** Sends one buffer through INSTREAM and parses clamd's one-line answer. */
export async function clamdInstream(addr: ClamdAddress, content: Buffer, signal?: AbortSignal): Promise<ClamdReply> {
  const socket = await connect(addr, signal);
  const reply = await new Promise<string>((resolve, reject) => {
    const parts: Buffer[] = [];
    socket.on('data', (d: Buffer) => parts.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      if (signal?.aborted) reject(new Error('clamd scan aborted'));
      else resolve(Buffer.concat(parts).toString('utf8').replace(/\0/g, '').trim());
    });
    const writeAll = async (): Promise<void> => {
      const write = (b: Buffer): Promise<void> => new Promise((ok) => {
        if (socket.write(b)) ok();
        else socket.once('drain', () => ok());
      });
      await write(Buffer.from('zINSTREAM\0'));
      for (let off = 0; off < content.length && !socket.destroyed; off += CHUNK) {
        const chunk = content.subarray(off, Math.min(off + CHUNK, content.length));
        const header = Buffer.alloc(4);
        header.writeUInt32BE(chunk.length);
        await write(header);
        await write(chunk);
      }
      if (!socket.destroyed) socket.end(Buffer.alloc(4));
    };
    // clamd may answer early (size limit) and close; a write after that is harmless.
    writeAll().catch(reject);
  });
  socket.destroy();
  const m = /^stream: (.+) FOUND$/.exec(reply);
  if (m) return { clean: false, signature: m[1] };
  if (reply === 'stream: OK') return { clean: true };
  throw new Error(`clamd: ${reply || 'connection closed without an answer'}`);
}

/** Signature families that are not certain malware get a lower severity. */
export function severityForSignature(signature: string): Pick<Finding, 'severity' | 'confidence' | 'category'> {
  if (/^PUA\./i.test(signature)) return { severity: 'medium', confidence: 0.7, category: 'pua' };
  if (/^Heuristics\./i.test(signature)) return { severity: 'high', confidence: 0.75, category: 'heuristic' };
  return { severity: 'critical', confidence: 0.95, category: /eicar/i.test(signature) ? 'test' : 'malware' };
}

/** `addr` comes from config.ts (CLAMD_HOST / CLAMD_PORT, or the local clamd); without one the engine is unavailable. */
export function createClamavEngine(addr?: ClamdAddress): Engine {
  return {
    name: 'clamav',
    async scan(subject: ScanSubject, ctx: EngineContext): Promise<EngineOutput> {
      if (!addr) throw new EngineUnavailableError('no clamd address configured');
      const reply = await clamdInstream(addr, subject.content, ctx.signal);
      if (reply.clean) return { findings: [], report: { clamav: { result: 'OK' } } };
      return {
        findings: [{
          id: reply.signature,
          name: reply.signature.replace(/\.UNOFFICIAL$/, ''),
          ...severityForSignature(reply.signature),
          description: `ClamAV signature ${reply.signature} matched.`,
        }],
        report: { clamav: { result: 'FOUND', signature: reply.signature } },
      };
    },
  };
}
