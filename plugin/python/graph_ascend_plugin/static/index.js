// TensorBoard loads this module in the plugin's iframe; the page itself is a
// single-file index.html served by the plugin under its own CSP.
export async function render() {
  document.location.href = 'index.html';
}
