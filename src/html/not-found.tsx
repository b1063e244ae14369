export function NotFound() {
  return (
    <>
      <h1>Not found</h1>
      <p>There is no such page here. Pick a section from the menu above.</p>
    </>
  );
}
