/** Entity permissions and the default entity role (docs/contract.md §2 "Roles and permissions"). */
export const PERMISSIONS = [
  'entity:Publish',
  'entity:State',
  'entity:CheckMessages',
  'entity:Files',
  'entity:ListMessages',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const DEFAULT_ROLE = 'default';
export const DEFAULT_ROLE_PERMISSIONS: readonly Permission[] = ['entity:Publish', 'entity:State', 'entity:CheckMessages', 'entity:Files'];

export const isPermission = (v: unknown): v is Permission => typeof v === 'string' && (PERMISSIONS as readonly string[]).includes(v);
