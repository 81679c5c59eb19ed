/**
 * Every page of the dashboard, in navigation order. A capability adds its pages as one module
 * exporting `pages` and one line here.
 */
import type { PageDef } from './page';
import { pages as overview } from './overview';
import { pages as scans } from './scans';
import { pages as profiles } from './profiles';
import { pages as devices } from './devices';
import { pages as messages } from './messages';
import { pages as clips } from './clips';
import { pages as workflows } from './workflows';
import { pages as audit } from './audit';

export const PAGES: PageDef[] = [...overview, ...scans, ...profiles, ...devices, ...messages, ...clips, ...workflows, ...audit];
