/** Time-ordered ids (24 hex characters, the ObjectId format): made here, so services need not import the driver. */
import { ObjectId } from 'mongodb';

export const newTimeOrderedId = (): string => new ObjectId().toHexString();
