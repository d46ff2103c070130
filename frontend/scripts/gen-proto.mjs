// Generates the TypeScript mirror of proto/*.proto into src/api/gen with
// Debian's protoc and the ts-proto plugin, so the API client cannot drift
// from the service. The output holds the message interfaces plus
// fromJSON/toJSON, which implement protobuf's JSON mapping (defaults for
// omitted fields, enum names, int64 strings, "NaN").
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const frontend = resolve(here, "..");
const protoDir = resolve(frontend, "../proto");
const out = join(frontend, "src/api/gen");
const plugin = join(frontend, "node_modules/.bin/protoc-gen-ts_proto");

if (!existsSync(plugin)) {
  console.error(`gen-proto: ${plugin} is missing; run npm ci in frontend/`);
  process.exit(1);
}
const options = [
  "outputEncodeMethods=false",
  "outputJsonMethods=true",
  "outputPartialMethods=true",
  "outputTypeRegistry=false",
  "outputServices=generic-definitions",
  "stringEnums=true",
  "forceLong=number",
  "esModuleInterop=true",
  "useExactTypes=false",
  "importSuffix=.js",
].join(",");

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
try {
  execFileSync(
    "protoc",
    [
      `--plugin=protoc-gen-ts_proto=${plugin}`,
      `--ts_proto_out=${out}`,
      `--ts_proto_opt=${options}`,
      `-I${protoDir}`,
      join(protoDir, "vis.proto"),
      join(protoDir, "graph_service.proto"),
    ],
    { stdio: "inherit" },
  );
} catch (e) {
  console.error(`gen-proto: protoc failed on ${protoDir}/*.proto`);
  process.exit(1);
}
console.log(`gen-proto: wrote ${out}`);
