import http from 'node:http';
import net from 'node:net';
import { listenOn } from '../../../src/stack/net';
import { startMetricsServer } from '../../../src/telemetry/server';
import { createLogger } from '../../../src/log';

/** A port in use fails start-up with a message naming the setting that moves it. */
describe('listenOn', () => {
  let holder: net.Server;
  let port: number;
  beforeAll(async () => {
    holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', () => resolve()));
    port = (holder.address() as net.AddressInfo).port;
  });
  afterAll(async () => { await new Promise<void>((resolve) => holder.close(() => resolve())); });

  it('names the setting when the port is taken', async () => {
    const server = http.createServer();
    await expect(listenOn(server, port, '127.0.0.1', 'PORT')).rejects.toThrow(`127.0.0.1:${port} is already in use: stop what listens there or set PORT to a free port`);
    expect(server.listening).toBe(false);
  });

  it('names the host when it is not an address of this machine, or does not resolve', async () => {
    const server = http.createServer();
    await expect(listenOn(server, 0, '192.0.2.1', 'METRICS_PORT')).rejects.toThrow('192.0.2.1 is not an address of this machine (METRICS_PORT 0; the host comes from METRICS_HOST)');
    await expect(listenOn(http.createServer(), 0, 'nohost.invalid', 'PORT')).rejects.toThrow('nohost.invalid does not resolve to an address of this machine: set HOST to one (0.0.0.0 for all)');
  });

  it('listens when the port is free, and leaves no error listener behind', async () => {
    const server = http.createServer();
    await listenOn(server, 0, '127.0.0.1', 'PORT');
    expect(server.listening).toBe(true);
    expect(server.listenerCount('error')).toBe(0);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('the metrics server refuses a taken port by its setting', async () => {
    await expect(startMetricsServer({ port, host: '127.0.0.1', logger: createLogger('silent') }))
      .rejects.toThrow('set METRICS_PORT to a free port');
  });
});
