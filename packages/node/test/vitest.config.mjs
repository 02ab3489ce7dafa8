// vitest: one mocklib serve for every test file (each file's setupServer
// attaches to it through MOCKLIB_URL), started in the global setup.
export default {
  test: {
    globalSetup: ['./test/mocklib-setup.mjs'],
  },
};
