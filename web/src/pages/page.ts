/** What a page module contributes: routes, and at most one entry in the navigation. */
import type { VNode } from 'preact';

export interface PageDef {
  /** Hash route pattern, :param segments allowed. */
  pattern: string;
  title: string;
  /** Present on the page the navigation links to; it stays marked on paths below it. */
  nav?: { label: string };
  render: (params: Record<string, string>) => VNode;
}
