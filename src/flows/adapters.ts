/** The other capabilities as node kinds see them (small interfaces in nodes/types.ts). */
import type { AccountService } from '../accounts/service';
import type { ScanService } from '../scan/service';
import type { PayloadScanner } from './nodes/types';
import { NodeFailure } from './nodes/types';

/** `scan` nodes go through the one scan pipeline: the account's quota and profiles apply. */
export function payloadScanner(scans: ScanService, accounts: AccountService): PayloadScanner {
  return {
    async scanPayload(req) {
      const account = await accounts.getAccount(req.accountId);
      const outcome = await scans.scan({ account, requestId: req.requestId, content: req.content, name: req.label, scanType: 'payload', profileId: req.profileId });
      // Payloads are at most 10 MB and never deferred; a deferral would mean the rules changed.
      if (outcome.kind !== 'complete') throw new NodeFailure('the scan was deferred; scan nodes need a synchronous result', false);
      return outcome.result;
    },
  };
}
