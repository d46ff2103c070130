// Text files bundled into the page at build time (Vite's ?raw imports).
declare module "*.md?raw" {
  const text: string;
  export default text;
}
