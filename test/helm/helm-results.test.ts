// The revision helm upgrade reports, read from its own output (text as helm 4.1.4 and 3.17.2
// print it, -o json and -o yaml passed through), so the installer needs no second `helm history`.
import { describe, expect, it } from 'vitest';
import { parseUpgradeRevision } from '../../src/helm/helm-results.js';

const upgraded = `Release "perfc" has been upgraded. Happy Helming!
NAME: perfc
LAST DEPLOYED: Sun Nov 22 10:55:42 2026
NAMESPACE: perf-probe
STATUS: deployed
REVISION: 12
DESCRIPTION: Upgrade complete
TEST SUITE: None
NOTES:
Upgraded from REVISION: 11
REVISION: 99
`;

describe('parseUpgradeRevision', () => {
  it("reads the status block's REVISION line, not a line of the chart's NOTES", () => {
    expect(parseUpgradeRevision(upgraded)).toBe(12);
    expect(
      parseUpgradeRevision(
        'Release "perfc" does not exist. Installing it now.\nNAME: perfc\nSTATUS: deployed\nREVISION: 1\n',
      ),
    ).toBe(1);
  });
  it('reads version from -o json and -o yaml', () => {
    expect(
      parseUpgradeRevision(
        '{"name":"perfc","info":{"status":"deployed"},"config":{"version":7},"version":3,"namespace":"perf-probe"}\n',
      ),
    ).toBe(3);
    expect(parseUpgradeRevision('chart:\n  metadata:\n    version: 0.1.0\nname: perfc\nversion: 5\n')).toBe(5);
  });
  it('is undefined when helm printed no revision', () => {
    for (const out of ['', 'Happy Helming!\n', '{"name":"x"}', '{broken', '{"version":"3"}'])
      expect(parseUpgradeRevision(out)).toBeUndefined();
  });
});
