// Category icons of our own, as data: URIs (the CSP allows images only from 'self' and data:).
// Used for a tool without an allowed data: icon of its own (contract §3).
const PATHS = {
  bulk: '<rect x="4" y="6" width="14" height="14" fill="none" stroke="#3d5a9e" stroke-width="2"/><path d="M4 6l4-3h14v14l-4 3M18 6l4-3" fill="none" stroke="#3d5a9e" stroke-width="2"/>',
  molecule: '<polygon points="12,3 20,8 20,16 12,21 4,16 4,8" fill="none" stroke="#3d5a9e" stroke-width="2"/>',
  polymer: '<circle cx="5" cy="12" r="3" fill="#3d5a9e"/><circle cx="12" cy="12" r="3" fill="#3d5a9e"/><circle cx="19" cy="12" r="3" fill="#3d5a9e"/><path d="M5 12h14" stroke="#3d5a9e" stroke-width="2"/>',
  surface: '<path d="M3 17l9 4 9-4M3 12l9 4 9-4M3 7l9 4 9-4-9-4z" fill="none" stroke="#3d5a9e" stroke-width="2"/>',
  solvation: '<path d="M12 3c4 6 6 9 6 12a6 6 0 0 1-12 0c0-3 2-6 6-12z" fill="none" stroke="#2f86c9" stroke-width="2"/>',
  other: '<circle cx="12" cy="12" r="7" fill="none" stroke="#3d5a9e" stroke-width="2"/><circle cx="12" cy="12" r="2" fill="#3d5a9e"/>',
};

export function categoryIcon(category) {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">${PATHS[category] ?? PATHS.other}</svg>`;
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}
