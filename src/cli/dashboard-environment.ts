/**
 * ink decides once, when it is first imported, whether it runs "in CI" (any CI or CI_*
 * variable): then it draws only the last frame, at exit. Someone who asks for a dashboard on
 * a real terminal wants it live, so those variables are dropped before ink loads. Call this
 * before importing anything that imports ink.
 */
export function keepDashboardLive(wantsDashboard: boolean): void {
  if (!wantsDashboard || !process.stdout.isTTY) return;
  for (const name of Object.keys(process.env)) {
    if (name === 'CI' || name === 'CONTINUOUS_INTEGRATION' || name.startsWith('CI_')) delete process.env[name];
  }
}
