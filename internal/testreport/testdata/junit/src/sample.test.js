describe('math', () => {
  test('adds', () => { expect(1 + 1).toBe(2); });
  test('fails', () => { console.log('log line'); expect('a').toBe('b'); });
  test.skip('skipped one', () => {});
  test.todo('to do later');
});
test('top level passes', () => {});
