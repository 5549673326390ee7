import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    environment: 'node',
    include: [
      'src/common/**/*.test.ts',
      'src/ai/**/*.test.ts',
      'src/preview/**/*.test.ts',
      'src/terminal/model.test.ts'
    ]
  }
});
