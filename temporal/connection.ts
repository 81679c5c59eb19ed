/**
 * Connections to Temporal: the client side (API role: start workflows, query them) and the
 * worker side (NativeConnection). TLS and API-key options come from config for Temporal Cloud
 * or a secured cluster; the local dev server needs neither.
 */
import { readFileSync } from 'node:fs';
import { Client, Connection, ConnectionOptions } from '@temporalio/client';
import { NativeConnection, NativeConnectionOptions } from '@temporalio/worker';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { Config, temporalAddressOf, usesLocalTemporal } from '../src/config';
import { tracing } from '../src/telemetry/tracing';

function tlsOf(config: Config) {
  const t = config.temporalTls;
  if (!t) return undefined;
  return {
    serverNameOverride: t.serverName,
    serverRootCACertificate: t.caPath ? readFileSync(t.caPath) : undefined,
    clientCertPair: t.certPath && t.keyPath ? { crt: readFileSync(t.certPath), key: readFileSync(t.keyPath) } : undefined,
  };
}

export async function connectClient(config: Config): Promise<Client> {
  const opts: ConnectionOptions = {
    address: temporalAddressOf(config),
    tls: tlsOf(config),
    apiKey: config.temporalApiKey,
    connectTimeout: '10s',
  };
  const connection = await Connection.connect(opts).catch((err: unknown) => { throw unreachable(config, err); });
  // With traces on, a workflow start is a span whose context travels to the workflow in its headers.
  const interceptors = tracing() ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
  return new Client({ connection, namespace: config.temporalNamespace, interceptors });
}

export async function connectWorker(config: Config): Promise<NativeConnection> {
  const opts: NativeConnectionOptions = {
    address: temporalAddressOf(config),
    tls: tlsOf(config),
    apiKey: config.temporalApiKey,
  };
  return NativeConnection.connect(opts).catch((err: unknown) => { throw unreachable(config, err); });
}

/** The SDK's "Failed to connect before the deadline" names neither the address nor the setting. */
function unreachable(config: Config, err: unknown): Error {
  const setting = usesLocalTemporal(config) ? 'TEMPORAL_PORT (the local dev server)' : 'TEMPORAL_ADDRESS';
  return new Error(`cannot reach Temporal at ${temporalAddressOf(config)} (${setting}): ${(err as Error).message}`, { cause: err });
}

/** Health probe: the frontend answers a cheap call in our namespace. */
export async function pingTemporal(client: Client, namespace: string): Promise<void> {
  await client.workflowService.describeNamespace({ namespace });
}
