import { defineConfig } from "vite";

export default defineConfig({
  // Keep the package's Worker and .wasm URLs relative to its own files.
  optimizeDeps: { exclude: ["megane-builder-client"] },
  worker: { format: "es" },
  build: { target: "es2022", outDir: "dist", emptyOutDir: true },
});
