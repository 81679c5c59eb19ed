/**
 * The `worker` role: a Temporal worker running the workflows under workflows/ (bundled for the
 * sandbox at start) and the activities under activities/.
 */
import path from 'node:path';
import pino from 'pino';
import { DefaultLogger, InjectedSink, NativeConnection, Runtime, Worker, WorkerOptions, bundleWorkflowCode } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import {
  makeWorkflowExporter, OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor, type OpenTelemetryWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry';
import type { Config } from '../src/config';
import type { Logger } from '../src/log';
import { createActivities, ActivityDeps } from '../activities';
import { NODE_HEARTBEAT_MS } from '../activities/flows';
import { WORKER_ACTIVITY_SLOTS } from './limits';
import { findFreePort } from '../src/stack/net';
import { metricsEnabled } from '../src/telemetry/metrics';
import { serveTemporalMetricsFrom } from '../src/telemetry/server';
import { tracing } from '../src/telemetry/tracing';

/**
 * Routes the SDK's own logs (worker state, workflow and activity logs) into pino and, with metrics
 * on, has the SDK's core serve its worker series on a loopback port that GET /metrics reads
 * (src/telemetry/server.ts). Once per process.
 */
let runtimeInstalled = false;
export async function installTemporalRuntime(logger: Logger): Promise<void> {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const log = logger.child({ component: 'temporal-sdk' });
  const corePort = metricsEnabled() ? await findFreePort() : undefined;
  Runtime.install({
    ...(corePort ? {
      telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${corePort}`, countersTotalSuffix: true, useSecondsForDurations: true } } },
    } : {}),
    logger: new DefaultLogger('INFO', (entry) => {
      const meta = sdkLogFields(entry.meta);
      const level = entry.level === 'TRACE' ? 'trace' : entry.level === 'DEBUG' ? 'debug' : entry.level === 'INFO' ? 'info' : entry.level === 'WARN' ? 'warn' : 'error';
      log[level](meta, entry.message);
    }),
  });
  if (corePort) serveTemporalMetricsFrom(`http://127.0.0.1:${corePort}/metrics`);
}

/**
 * The SDK's log fields for pino. It passes failures as `error` (an Error, or a Temporal failure):
 * pino writes an Error under any key but `err` as `{}`, so the line said nothing of what failed.
 */
export function sdkLogFields(meta: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(meta ?? {})) {
    out[key === 'error' && value instanceof Error ? 'err' : key] = value instanceof Error && key !== 'error' && key !== 'err'
      ? pino.stdSerializers.err(value)
      : value;
  }
  return out;
}

/**
 * With traces on: the workflow spans (recorded in the sandbox and handed to the worker through a
 * sink) and the activity spans continue the trace of the call that started the workflow, and the
 * activity's span is the active one while it runs, so its outbound requests join it.
 */
function tracingOptions(): Pick<WorkerOptions, 'interceptors' | 'sinks'> & { workflowModules: string[] } {
  const t = tracing();
  if (!t) return { workflowModules: [] };
  const workflowModules = [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')];
  return {
    workflowModules,
    // The workflow interceptors are built into the bundle (the worker ignores them with a bundle given).
    interceptors: {
      activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
    },
    sinks: { exporter: idsOnlyExporter(makeWorkflowExporter(t.spanProcessor, t.resource)) },
  };
}

/**
 * The SDK's workflow span sink merges the whole WorkflowInfo into every workflow span's
 * attributes, search attributes (AccountId, FlowName) and memo (the workflow's name) included:
 * it is handed the execution's ids only.
 */
function idsOnlyExporter(sink: InjectedSink<OpenTelemetryWorkflowExporter>): InjectedSink<OpenTelemetryWorkflowExporter> {
  return {
    export: {
      ...sink.export,
      fn: (info, spans) => {
        const ids: Pick<WorkflowInfo, 'workflowId' | 'runId' | 'workflowType' | 'taskQueue' | 'namespace' | 'attempt'> = {
          workflowId: info.workflowId, runId: info.runId, workflowType: info.workflowType, taskQueue: info.taskQueue, namespace: info.namespace, attempt: info.attempt,
        };
        sink.export.fn(ids as WorkflowInfo, spans);
      },
    },
  };
}

export interface RunningWorker { worker: Worker; done: Promise<void>; shutdown(): Promise<void> }

export async function startWorker(config: Config, connection: NativeConnection, deps: ActivityDeps, logger: Logger): Promise<RunningWorker> {
  const started = Date.now();
  const { workflowModules, ...traced } = tracingOptions();
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: path.join(config.rootDir, 'workflows', 'index.ts'),
    workflowInterceptorModules: workflowModules,
    logger: { trace() {}, debug() {}, info() {}, warn: (m) => logger.warn(m), error: (m) => logger.error(m), log() {} },
  });
  logger.info({ ms: Date.now() - started }, 'workflow bundle built');
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
    workflowBundle,
    activities: createActivities(deps),
    // Node activities mostly wait on I/O; one account can hold at most half of these (temporal/limits.ts).
    maxConcurrentActivityTaskExecutions: WORKER_ACTIVITY_SLOTS,
    // Workflow nodes heartbeat every NODE_HEARTBEAT_MS so a cancelled run reaches them (activities/flows.ts);
    // activities without a heartbeat timeout would otherwise send them on only every 30 s.
    defaultHeartbeatThrottleInterval: NODE_HEARTBEAT_MS,
    shutdownGraceTime: '10s',
    ...traced,
  });
  const done = worker.run();
  return {
    worker,
    done,
    shutdown: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done.catch(() => undefined);
    },
  };
}
