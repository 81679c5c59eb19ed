/** MQTT topic names of an entity: {accountId}/{region}/{apiKeyId}/publish|messages|state. */
export interface EntityTopics { publish: string; messages: string; state: string }

export function topicsOf(accountId: string, region: string, apiKeyId: string): EntityTopics {
  const base = `${accountId}/${region}/${apiKeyId}`;
  return { publish: `${base}/publish`, messages: `${base}/messages`, state: `${base}/state` };
}
