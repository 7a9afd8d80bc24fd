// The apiVersions the RBAC preflight reads discovery for while helm renders: those a chart's
// templates and CRDs write out literally, subcharts included; nothing else counts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chartApiVersions, literalApiVersions } from '../../src/rbac/chart-api-versions.js';
import { tempDir } from '../helpers.js';

describe('literalApiVersions', () => {
  it('reads apiVersion lines at the start of a line, quoted or with a comment; skips templated and indented ones', () => {
    const text = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      '---',
      'apiVersion: "networking.k8s.io/v1" # ingress',
      "apiVersion: 'v1'",
      'apiVersion: {{ include "x.apiVersion" . }}',
      '  apiVersion: batch/v1',
      'apiVersion: policy/v1beta1',
      'apiVersion: apps/v1',
      '# apiVersion: rbac.authorization.k8s.io/v1',
    ].join('\n');
    expect(literalApiVersions(text)).toEqual(['apps/v1', 'networking.k8s.io/v1', 'v1', 'policy/v1beta1']);
  });
});

describe('chartApiVersions', () => {
  it('templates/ (nested), crds/ and unpacked subcharts; not Chart.yaml, values or other files', () => {
    const dir = join(tempDir('chart-api-versions'), 'app');
    const write = (rel: string, text: string) => {
      mkdirSync(join(dir, rel, '..'), { recursive: true });
      writeFileSync(join(dir, rel), text);
    };
    write('Chart.yaml', 'apiVersion: v2\nname: app\nversion: 1.0.0\n');
    write('values.yaml', 'apiVersion: example.com/v9\n');
    write('files/extra.yaml', 'apiVersion: files.example.com/v1\n');
    write('templates/web/deployment.yaml', 'apiVersion: apps/v1\nkind: Deployment\n');
    write('templates/_helpers.tpl', '{{- define "x" -}}\napiVersion: batch/v1\n{{- end }}\n');
    write('templates/NOTES.txt', 'apiVersion: notes.example.com/v1\n');
    write('crds/widgets.yaml', 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n');
    write('charts/cache/Chart.yaml', 'apiVersion: v2\nname: cache\nversion: 1.0.0\n');
    write('charts/cache/templates/redis.yaml', 'apiVersion: cache.example.com/v1alpha1\nkind: Redis\n');
    expect(chartApiVersions(dir).sort()).toEqual(['apiextensions.k8s.io/v1', 'apps/v1', 'batch/v1', 'cache.example.com/v1alpha1']);
  });

  it('an archive or a path that is not there: none', () => {
    const dir = tempDir('chart-api-versions-none');
    writeFileSync(join(dir, 'app-1.0.0.tgz'), 'not read');
    expect(chartApiVersions(join(dir, 'app-1.0.0.tgz'))).toEqual([]);
    expect(chartApiVersions(join(dir, 'missing'))).toEqual([]);
  });
});
