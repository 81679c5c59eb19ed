/** The other capabilities as node kinds see them (small interfaces in nodes/types.ts). */
import { availableParallelism } from 'node:os';
import type { AccountService } from '../accounts/service';
import type { ScanService } from '../scan/service';
import type { FileService } from '../files/service';
import { AppError } from '../errors';
import { planOf } from '../accounts/plans';
import type { ConnectorService } from '../connectors/service';
import { S3_CLIENT_POLICY } from '../connectors/s3';
import { runPythonSnippet } from '../sandbox/python';
import { FairSlots } from './fair-slots';
import type { ObjectStorage, PayloadScanner, SnippetRunner } from './nodes/types';
import { NodeFailure } from './nodes/types';

/** `scan` nodes go through the one scan pipeline: the account's quota and profiles apply. */
export function payloadScanner(scans: ScanService, accounts: AccountService, files: Pick<FileService, 'contentForScan'>): PayloadScanner {
  return {
    async scanPayload(req) {
      const account = await accounts.getAccount(req.accountId);
      const outcome = await scans.scan({ account, requestId: req.requestId, content: req.content, name: req.label, scanType: 'payload', profileId: req.profileId });
      // Payloads are at most 10 MB and never deferred; a deferral would mean the rules changed.
      if (outcome.kind !== 'complete') throw new NodeFailure('the scan was deferred; scan nodes need a synchronous result', false);
      return outcome.result;
    },
    async scanStoredFile(req) {
      const account = await accounts.getAccount(req.accountId);
      let file: { content: Buffer; filename: string };
      try {
        file = await files.contentForScan(req.accountId, req.fileId);
      } catch (err) {
        if (err instanceof AppError && err.status === 404) throw new NodeFailure(`file "${req.fileId}" not found in this account (or no longer holds its bytes)`, false);
        throw err;
      }
      const outcome = await scans.scan({ account, requestId: req.requestId, content: file.content, name: req.label ?? file.filename, scanType: 'file', profileId: req.profileId });
      // Files over the synchronous-scan size are deferred by the scan pipeline; a node needs the verdict now.
      if (outcome.kind !== 'complete') throw new NodeFailure(`file "${req.fileId}" is too large for a synchronous scan (deferred scans are not awaited by scan nodes)`, false);
      return outcome.result;
    },
  };
}

/**
 * Snippets one worker process runs at once (each a jail process of up to 256 MB): the worker's
 * activity slots are sized for nodes that wait on I/O, so snippets take turns, account by account,
 * and one account holds fewer than half of them (FairSlots): at least 4, so that on a small host
 * a slot stays free while two accounts' snippets sleep.
 */
export const SNIPPETS_AT_ONCE = Math.max(4, availableParallelism());

/** `python` nodes: the jail with the output cap of the account's plan; a turn's wait counts in the node's timeout. */
export function snippetRunner(accounts: AccountService, slots = new FairSlots(SNIPPETS_AT_ONCE)): SnippetRunner {
  return {
    async runSnippet(req) {
      const account = await accounts.getAccount(req.accountId);
      return slots.run(req.accountId, req.signal, () => runPythonSnippet({
        code: req.code, input: req.input, timeoutMs: req.timeoutMs, signal: req.signal, outputCapBytes: planOf(account.plan).pythonSnippetOutputBytes,
      }));
    },
  };
}

/** `aws.s3` nodes: the account's connector with the client policy of docs/contract.md §7 "Connectors and vault" (timeouts overridable by config for test stacks). */
export function objectStorage(connectors: ConnectorService, timeouts: { connectMs?: number; readMs?: number }): ObjectStorage {
  const policy = {
    ...S3_CLIENT_POLICY,
    ...(timeouts.connectMs !== undefined ? { connectionTimeoutMs: timeouts.connectMs } : {}),
    ...(timeouts.readMs !== undefined ? { readTimeoutMs: timeouts.readMs } : {}),
  };
  return { runS3: (accountId, op, opts) => connectors.runS3(accountId, op, { ...opts, policy }) };
}
