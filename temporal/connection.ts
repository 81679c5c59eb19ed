/**
 * Connections to Temporal: the client side (API role: start workflows, query them) and the
 * worker side (NativeConnection). TLS and API-key options come from config for Temporal Cloud
 * or a secured cluster; the local dev server needs neither.
 */
import { readFileSync } from 'node:fs';
import { Client, Connection, ConnectionOptions } from '@temporalio/client';
import { NativeConnection, NativeConnectionOptions } from '@temporalio/worker';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { Config, temporalAddressOf } from '../src/config';
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
  const connection = await Connection.connect(opts);
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
  return NativeConnection.connect(opts);
}

/** Health probe: the frontend answers a cheap call in our namespace. */
export async function pingTemporal(client: Client, namespace: string): Promise<void> {
  await client.workflowService.describeNamespace({ namespace });
}
