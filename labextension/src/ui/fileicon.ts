/**
 * The icon Lab shows for a file, by its path.
 */
import type { DocumentRegistry } from '@jupyterlab/docregistry';
import { fileIcon, LabIcon } from '@jupyterlab/ui-components';

/**
 * Looks up icons by file type, remembering them per extension.
 */
export class FileIconResolver {
  constructor(registry: DocumentRegistry | null) {
    this._registry = registry;
  }

  /**
   * The icon of the first file type that matches `path`, or a plain file.
   */
  iconFor(path: string): LabIcon {
    if (!this._registry) {
      return fileIcon;
    }
    const name = path.slice(path.lastIndexOf('/') + 1);
    const dot = name.lastIndexOf('.');
    // Dot files and names without extension can match a type by full name.
    const key = dot > 0 ? name.slice(dot).toLowerCase() : name;
    let icon = this._cache.get(key);
    if (!icon) {
      const type = this._registry.getFileTypesForPath(path)[0];
      icon = type?.icon ?? fileIcon;
      this._cache.set(key, icon);
    }
    return icon;
  }

  private readonly _registry: DocumentRegistry | null;
  private readonly _cache = new Map<string, LabIcon>();
}
