import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isCpid, normalizeCpid, shortCpid } from '../../src/cpid.js';

test('a CPID is a non-nil UUID, in either case, surrounding blanks ignored', () => {
  assert.equal(isCpid('3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60'), true);
  assert.equal(isCpid(' 3F2B8E4C-9A1D-4C7E-8F00-1B2C3D4E5F60 '), true);
  assert.equal(normalizeCpid(' 3F2B8E4C-9A1D-4C7E-8F00-1B2C3D4E5F60 '), '3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60');
});

test('not CPIDs: nil, short, no dashes, other characters, nothing', () => {
  for (const bad of ['00000000-0000-0000-0000-000000000000', '3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f6',
    '3f2b8e4c9a1d4c7e8f001b2c3d4e5f60', '3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f6g', '', undefined, null, 'not-a-cpid']) {
    assert.equal(isCpid(bad), false, String(bad));
  }
});

test('the short form is the first eight digits', () => {
  assert.equal(shortCpid('3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60'), '3f2b8e4c');
});
