// Files imported `with { type: "file" }` resolve to a path that Bun.file() can read, also inside
// the compiled binary.
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "*/dashboard.js" {
  const path: string;
  export default path;
}
declare module "*/signup.js" {
  const path: string;
  export default path;
}
declare module "htmx.org/dist/htmx.min.js" {
  const path: string;
  export default path;
}
declare module "*.svg" {
  const path: string;
  export default path;
}
declare module "*/standalone.js" {
  const path: string;
  export default path;
}
