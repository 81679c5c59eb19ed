import net from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it). */
export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once a TCP connection to host:port succeeds; rejects after timeoutMs. */
export async function waitForTcp(host: string, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await canConnect(host, port, Math.min(1000, Math.max(50, deadline - Date.now())))) return;
    if (Date.now() >= deadline) throw new Error(`nothing accepts TCP connections on ${host}:${port} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** True when something accepts TCP connections on host:port. */
export function canConnect(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Whether something already listens on host:port (a bind attempt answers EADDRINUSE). */
export function portTaken(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE'));
    server.once('listening', () => server.close(() => resolve(false)));
    server.listen(port, host);
  });
}

/** The setting that names the host a port setting listens on. */
const hostSettingOf = (portSetting: string): string => (portSetting === 'METRICS_PORT' ? 'METRICS_HOST' : 'HOST');

/**
 * Listens on host:port. A port in use or not allowed fails with a message that names the
 * setting to change, instead of a bare "listen EADDRINUSE".
 */
export function listenOn(server: net.Server, port: number, host: string | undefined, setting: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const where = `${host ?? '0.0.0.0'}:${port}`;
      if (err.code === 'EADDRINUSE') reject(new Error(`${where} is already in use: stop what listens there or set ${setting} to a free port`, { cause: err }));
      else if (err.code === 'EACCES') reject(new Error(`not allowed to listen on ${where}: set ${setting} to a port above 1023`, { cause: err }));
      else if (err.code === 'EADDRNOTAVAIL') reject(new Error(`${host} is not an address of this machine (${setting} ${port}; the host comes from ${hostSettingOf(setting)})`, { cause: err }));
      else if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') reject(new Error(`${host} does not resolve to an address of this machine: set ${hostSettingOf(setting)} to one (0.0.0.0 for all)`, { cause: err }));
      else reject(err);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
