/** Messaging rules. */
import type { AccountDoc, EntityDoc } from '../accounts/store';
import { topicsOf } from './topics';

export class MessagingInfo {
  constructor(private readonly publicMqttUrl: string) {}

  entityInfo(account: AccountDoc, entity: EntityDoc) {
    return {
      name: entity.name,
      resourcePath: entity.resourcePath,
      apiKeyId: entity.apiKeyId,
      accountId: account._id,
      region: account.region,
      tags: entity.tags,
      mqtt: { url: this.publicMqttUrl, topics: topicsOf(account._id, account.region, entity.apiKeyId) },
    };
  }
}
