export default async function globalTeardown(): Promise<void> {
  await globalThis.__SENTINEL_MONGO_STAND_IN__?.stop();
  await globalThis.__SENTINEL_SERVICE__?.stop();
}
