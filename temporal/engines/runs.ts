/**
 * User-workflow runs on Temporal: one execution of the interpreter (`flowRun`) per run, workflow
 * id `run-<runId>`, on the service's task queue, with the search attributes operators filter by
 * in the Web UI (AccountId, FlowId, FlowName, Trigger; `npm start` registers them on the local
 * dev server), a memo naming the workflow, and the account as its fairness key.
 */
import { Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';
import type { RunEngine, RunStartRequest } from '../../src/flows/service';
import type { FlowRunArgs } from '../../workflows/flow';
import { runStartOptions } from '../limits';

export const RUN_SEARCH_ATTRIBUTES = {
  AccountId: defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD),
  FlowId: defineSearchAttributeKey('FlowId', SearchAttributeType.KEYWORD),
  FlowName: defineSearchAttributeKey('FlowName', SearchAttributeType.KEYWORD),
  Trigger: defineSearchAttributeKey('Trigger', SearchAttributeType.KEYWORD),
};

/** The interpreter (workflows/flow.ts). */
const RUN_WORKFLOW = 'flowRun';

export const runWorkflowId = (runId: string): string => `run-${runId}`;

export class TemporalRunEngine implements RunEngine {
  constructor(private readonly client: Client, private readonly taskQueue: string) {}

  async start(req: RunStartRequest): Promise<void> {
    const args: FlowRunArgs = {
      runId: req.runId, accountId: req.accountId, flowId: req.flowId, nodes: req.nodes, edges: req.edges,
      depth: 0, deadline: req.deadline, record: true,
    };
    try {
      await this.client.workflow.start(RUN_WORKFLOW, {
        taskQueue: this.taskQueue,
        workflowId: runWorkflowId(req.runId),
        args: [args],
        ...runStartOptions(),
        memo: { workflowName: req.flowName },
        // Its child runs and activities inherit it: a server with fairness on serves the task
        // queue's backlog account by account instead of first come, first served.
        priority: { fairnessKey: req.accountId },
        typedSearchAttributes: new TypedSearchAttributes([
          { key: RUN_SEARCH_ATTRIBUTES.AccountId, value: req.accountId },
          { key: RUN_SEARCH_ATTRIBUTES.FlowId, value: req.flowId },
          { key: RUN_SEARCH_ATTRIBUTES.FlowName, value: req.flowName.slice(0, 200) },
          { key: RUN_SEARCH_ATTRIBUTES.Trigger, value: req.trigger },
        ]),
      });
    } catch (err) {
      // A retried start of the same run finds its execution already there: that is the run.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  async outcome(runId: string): ReturnType<RunEngine['outcome']> {
    try {
      const d = await this.client.workflow.getHandle(runWorkflowId(runId)).describe();
      switch (d.status.name) {
        case 'RUNNING': return 'running';
        case 'COMPLETED': return 'completed';
        case 'TIMED_OUT': return 'timed_out';
        case 'TERMINATED': return 'terminated';
        case 'CANCELLED': return 'cancelled';
        case 'CONTINUED_AS_NEW': return 'running';
        default: return 'failed';
      }
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'missing';
      throw err;
    }
  }

  async cancel(runId: string): Promise<void> {
    try {
      await this.client.workflow.getHandle(runWorkflowId(runId)).cancel();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }
}
