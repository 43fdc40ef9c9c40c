// Resource ids of the android: attributes the worker reads. Each was checked
// against Debian's framework-res 10.0.0+r36 (`aapt dump resources
// /usr/share/android-framework-res/framework-res.apk`), except the two split
// type attributes added in API 33, which that framework predates; their ids
// are from AOSP's core/res/res/values/public-final.xml.
export const ATTR = Object.freeze({
  label: 0x01010001,
  name: 0x01010003,
  permission: 0x01010006,
  readPermission: 0x01010007,
  writePermission: 0x01010008,
  debuggable: 0x0101000f,
  exported: 0x01010010,
  process: 0x01010011,
  authorities: 0x01010018,
  value: 0x01010024,
  resource: 0x01010025,
  targetActivity: 0x01010202,
  minSdkVersion: 0x0101020c,
  versionCode: 0x0101021b,
  versionName: 0x0101021c,
  targetSdkVersion: 0x01010270,
  maxSdkVersion: 0x01010271,
  allowBackup: 0x01010280,
  extractNativeLibs: 0x010104ea,
  usesCleartextTraffic: 0x010104ec,
  networkSecurityConfig: 0x01010527,
  isFeatureSplit: 0x0101055b,
  isSplitRequired: 0x01010591,
  foregroundServiceType: 0x01010599,
  requiredSplitTypes: 0x0101064e,
  splitTypes: 0x0101064f,
});

export type AttrName = keyof typeof ATTR;
