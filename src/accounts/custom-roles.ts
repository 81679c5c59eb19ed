/**
 * Custom entity roles: any subset of the entity permissions, a plan entitlement (Standard, Pro;
 * elsewhere 403 plan_required, feature custom_roles). The built-in `default` role is listed but
 * cannot be changed. A role still held by an entity cannot be deleted.
 */
import { randomUUID } from 'node:crypto';
import { BadRequestError, ConflictError, NotFoundError, PlanRequiredError } from '../errors';
import type { AuditLog } from './audit';
import { hasEntitlement } from './plans';
import { DEFAULT_ROLE, DEFAULT_ROLE_PERMISSIONS, Permission } from './roles';
import { isDuplicateKey } from '../storage/errors';
import type { AccountDoc, RoleDoc, RoleRecords } from './records';
import type { AccountEvents } from './service';

const ROLE_NAME_RE = /^[A-Za-z0-9_.-]{1,64}$/;

export interface RoleView { name: string; permissions: Permission[]; builtIn: boolean; createdAt: string | null }

const view = (r: RoleDoc): RoleView => ({ name: r.name, permissions: r.permissions, builtIn: false, createdAt: r.createdAt.toISOString() });
const DEFAULT_VIEW: RoleView = { name: DEFAULT_ROLE, permissions: [...DEFAULT_ROLE_PERMISSIONS], builtIn: true, createdAt: null };


/** Whether any entity still holds a role (the entity store, entities/records.ts). */
export interface RoleHolders { roleInUse(accountId: string, role: string): Promise<boolean> }

export class CustomRoles {
  /** `events`: where a role's changed permissions are announced to live sessions (MQTT). */
  constructor(private readonly store: RoleRecords, private readonly holders: RoleHolders, private readonly audit: AuditLog, private readonly events?: AccountEvents) {}

  private entitled(account: AccountDoc): void {
    if (!hasEntitlement(account.plan, 'custom_roles')) throw new PlanRequiredError('custom_roles', account.plan, 'Custom roles require the Standard or Pro plan');
  }

  async list(account: AccountDoc): Promise<RoleView[]> {
    return [DEFAULT_VIEW, ...(await this.store.listRoles(account._id)).map(view)];
  }

  async get(account: AccountDoc, name: string): Promise<RoleView> {
    if (name === DEFAULT_ROLE) return DEFAULT_VIEW;
    const r = await this.store.findRole(account._id, name);
    if (!r) throw new NotFoundError('Role');
    return view(r);
  }

  async create(account: AccountDoc, input: { name: string; permissions: Permission[] }, actor: string): Promise<RoleView> {
    this.entitled(account);
    if (!ROLE_NAME_RE.test(input.name)) throw new BadRequestError('role name must match [A-Za-z0-9_.-]{1,64}');
    if (input.name === DEFAULT_ROLE) throw new ConflictError('the default role is built in');
    const doc: RoleDoc = { _id: randomUUID(), accountId: account._id, name: input.name, permissions: [...new Set(input.permissions)], createdAt: new Date() };
    try {
      await this.store.insertRole(doc);
    } catch (err) {
      if (isDuplicateKey(err)) throw new ConflictError(`role "${input.name}" already exists`);
      throw err;
    }
    await this.audit.record({ accountId: account._id, action: 'create', resourceType: 'role', resourceId: doc._id, resourceName: doc.name, userEmail: actor, details: { permissions: doc.permissions } });
    return view(doc);
  }

  async update(account: AccountDoc, name: string, permissions: Permission[], actor: string): Promise<RoleView> {
    this.entitled(account);
    if (name === DEFAULT_ROLE) throw new ConflictError('the default role is built in and cannot be changed');
    const r = await this.store.setRolePermissions(account._id, name, [...new Set(permissions)]);
    if (!r) throw new NotFoundError('Role');
    this.events?.emit('entityPermissionsChanged', account._id);
    await this.audit.record({ accountId: account._id, action: 'update', resourceType: 'role', resourceId: r._id, resourceName: r.name, userEmail: actor, details: { permissions: r.permissions } });
    return view(r);
  }

  async remove(account: AccountDoc, name: string, actor: string): Promise<void> {
    if (name === DEFAULT_ROLE) throw new ConflictError('the default role is built in and cannot be deleted');
    const r = await this.store.findRole(account._id, name);
    if (!r) throw new NotFoundError('Role');
    if (await this.holders.roleInUse(account._id, name)) throw new ConflictError(`role "${name}" is still assigned to entities; assign them another role first`);
    await this.store.deleteRole(account._id, name);
    await this.audit.record({ accountId: account._id, action: 'delete', resourceType: 'role', resourceId: r._id, resourceName: r.name, userEmail: actor, details: {} });
  }
}
