/** `aws.s3`: get, put, list or delete an object through one of the account's connectors. */
import { s3OperationSchema } from '../../connectors/schemas';
import type { S3OperationConfig } from '../../connectors/schemas';
import { NotFoundError } from '../../errors';
import { defineKind, NodeFailure } from './types';

export const awsS3Node = defineKind<S3OperationConfig>({
  type: 'aws.s3',
  summary: 'One S3 operation (get, put, list, delete) through a connector; 10 s connect and 30 s read timeouts, 3 attempts, each in the run log',
  configSchema: s3OperationSchema,
  example: { connector_id: '3f0c…', operation: 'put', bucket: 'reports', key: 'daily/{{ vars.runId }}.json', body: '{{ nodes.compute.result }}' },
  async execute(config, _ctx, run, deps) {
    try {
      const output = await deps.storage.runS3(run.accountId, config, {
        signal: run.signal,
        onAttempt: (a) => run.log(
          `aws.s3 ${config.operation} attempt ${a.attempt}: ${a.ok ? 'ok' : 'failed'}${a.status ? ` (HTTP ${a.status})` : ''} after ${a.durationMs} ms${a.error ? `: ${a.error}` : ''}`,
          a.ok ? 'info' : 'warn',
        ),
      });
      return { output };
    } catch (err) {
      if (err instanceof NotFoundError) throw new NodeFailure(`connector "${config.connector_id}" not found in this account`, false);
      // The SDK already made its 3 attempts; another Temporal attempt only on the node's own retry policy.
      throw new NodeFailure(`aws.s3 ${config.operation} failed: ${(err as Error).message}`);
    }
  },
});
