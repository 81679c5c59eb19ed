/** The node kinds: one file each, one line here. */
import type { NodeKind } from './types';
import { awsS3Node } from './aws-s3';
import { conditionNode } from './condition';
import { delayNode } from './delay';
import { deviceSendNode } from './device-send';
import { flowCallNode } from './flow-call';
import { forEachNode } from './for-each';
import { httpNode } from './http';
import { pythonNode } from './python';
import { scanNode } from './scan';
import { switchNode } from './switch';
import { transformNode } from './transform';

export const NODE_KINDS: ReadonlyArray<NodeKind<any>> = [
  httpNode,
  transformNode,
  conditionNode,
  switchNode,
  forEachNode,
  delayNode,
  flowCallNode,
  deviceSendNode,
  scanNode,
  pythonNode,
  awsS3Node,
];

const byType = new Map(NODE_KINDS.map((k) => [k.type, k]));
export const nodeKind = (type: string): NodeKind<any> | undefined => byType.get(type);
export const NODE_TYPES = NODE_KINDS.map((k) => k.type);
