/**
 * Starts the `mqtt` role: the embedded broker when MQTT_URL is unset, else the bridge to the
 * external broker. Either way the DeviceGateway does the work, fed by this process's events
 * (immediate) and by the signal log other processes write (polled).
 */
import type { Logger } from '../log';
import type { Services } from '../services';
import { startBridge, Bridge } from './bridge';
import { startEmbeddedBroker, EmbeddedBroker } from './broker';
import { DeviceGateway } from './gateway';
import type { MqttSignal } from './records';

export interface MqttRole {
  broker?: EmbeddedBroker;
  bridge?: Bridge;
  gateway: DeviceGateway;
  stop(): Promise<void>;
}

/** Short delay before serving a subscription an external broker told us about: its ACL answer precedes the subscription itself. */
const SUBSCRIBE_SETTLE_MS = 300;

export async function startMqttRole(s: Services, logger: Logger): Promise<MqttRole> {
  const log = logger.child({ component: 'mqtt' });
  const c = s.config;
  let broker: EmbeddedBroker | undefined;
  let bridge: Bridge | undefined;
  if (c.mqttUrl) {
    bridge = await startBridge({
      url: c.mqttUrl, username: c.mqttBridgeUsername, password: c.mqttBridgePassword, shareGroup: c.mqttShareGroup,
      presenceTtlMs: c.mqttPresenceTtlSeconds * 1000, accounts: s.accounts, mqtt: s.mqtt, logger,
    });
  } else {
    broker = await startEmbeddedBroker({ port: c.mqttPort, accounts: s.accounts, logger });
  }
  const transport = (broker ?? bridge) as EmbeddedBroker | Bridge;
  const gateway = new DeviceGateway(s, transport, transport, log);
  transport.use(gateway);

  const fail = (what: string) => (err: unknown) => log.error({ err }, what);
  const onQueued = (e: { accountId: string; destName: string; messageId: string }) =>
    gateway.onMessageQueued(e.accountId, e.destName, e.messageId).catch(fail('mqtt delivery failed'));
  const onState = (e: { accountId: string; entityName: string; apiKeyId: string }) =>
    gateway.publishState(e.accountId, e.entityName, e.apiKeyId).catch(fail('mqtt state publish failed'));
  const onRevoked = (apiKeyId: string) => {
    gateway.forget(apiKeyId);
    bridge?.forgetKey(apiKeyId).catch(fail('mqtt presence cleanup failed'));
  };
  s.messagingEvents.on('messageQueued', onQueued);
  s.messagingEvents.on('stateChanged', onState);
  s.accounts.events.on('entityKeyRevoked', onRevoked);

  s.mqttSignals.follow(async (signal: MqttSignal) => {
    switch (signal.kind) {
      case 'queued': return gateway.onMessageQueued(signal.accountId, signal.dest, signal.messageId);
      case 'state': return gateway.publishState(signal.accountId, signal.entityName, signal.apiKeyId);
      case 'revoked':
        gateway.forget(signal.apiKeyId);
        broker?.closeKey(signal.apiKeyId);
        await bridge?.forgetKey(signal.apiKeyId);
        return;
      case 'permissions':
        // Another process changed a role or the plan; this process's sessions re-read theirs.
        await broker?.refreshAccount(signal.accountId);
        return;
      case 'subscribed':
        if (!bridge) return;
        await new Promise((r) => setTimeout(r, SUBSCRIBE_SETTLE_MS));
        if (signal.topic === 'messages') await gateway.deliverPending(signal.device);
        else await gateway.publishState(signal.device.accountId, signal.device.entityName, signal.device.apiKeyId);
        return;
    }
  });

  return {
    broker,
    bridge,
    gateway,
    stop: async () => {
      s.mqttSignals.stop();
      s.messagingEvents.off('messageQueued', onQueued);
      s.messagingEvents.off('stateChanged', onState);
      s.accounts.events.off('entityKeyRevoked', onRevoked);
      await transport.close();
    },
  };
}
