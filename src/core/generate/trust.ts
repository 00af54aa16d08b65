/**
 * Which generation servers a VS Code run may send data to (issue 6 "Secrets and
 * trust"). Pure, so it is unit-tested without VS Code.
 *
 * In an untrusted workspace (Restricted Mode) a server named by the workspace's
 * own settings (`.vscode/settings.json`, a `.code-workspace` file, a folder
 * setting) is never used: a cloned repository must not be able to make the
 * extension send a dataset to a host of its choosing. Only the user's own
 * settings apply then. VS Code also drops those values for settings listed in
 * `capabilities.untrustedWorkspaces.restrictedConfigurations`; this is the same
 * rule, enforced here too.
 */

/** The `inspect()` result of a setting holding a list of server URLs (or one comma-separated string). */
export interface InspectedServers {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

function asList(v: unknown): string[] | undefined {
  if (typeof v === 'string')
    return v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (Array.isArray(v))
    return v
      .filter((s): s is string => typeof s === 'string')
      .map((s) => s.trim())
      .filter(Boolean);
  return undefined;
}

/**
 * The servers to use: the most specific setting (folder > workspace > user) when
 * trusted; only the user setting when not. `ignoredWorkspaceServers` lists what
 * was set by the workspace and ignored (to tell the user).
 */
export function serversFromSettings(s: InspectedServers, trusted: boolean): { servers: string[]; ignoredWorkspaceServers: string[] } {
  const folder = asList(s.workspaceFolderValue);
  const workspace = asList(s.workspaceValue);
  const user = asList(s.globalValue) ?? [];
  if (trusted) return { servers: folder?.length ? folder : workspace?.length ? workspace : user, ignoredWorkspaceServers: [] };
  return { servers: user, ignoredWorkspaceServers: [...(folder ?? []), ...(workspace ?? [])] };
}
