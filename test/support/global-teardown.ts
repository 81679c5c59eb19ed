export default async function globalTeardown(): Promise<void> {
  await globalThis.__SENTINEL_SERVICE__?.stop();
}
