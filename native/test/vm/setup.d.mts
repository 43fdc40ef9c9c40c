/** Types for setup.mjs. */
export declare const VM_CACHE: string;
export declare const VM_DEBIAN_PACKAGES: string[];
export declare function setupVm(): { kernel: string; config: string; busybox: string; qemu: string };
export declare function vmInstallCommand(): string;
