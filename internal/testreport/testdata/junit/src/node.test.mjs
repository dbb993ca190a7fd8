import { test, describe } from 'node:test';
import assert from 'node:assert';
describe('suite', () => {
  test('ok', () => {});
  test('bad', () => { assert.strictEqual(1, 2); });
  test('skipme', { skip: 'not now' }, () => {});
});
