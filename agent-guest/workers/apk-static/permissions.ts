// Android's runtime ("dangerous") permissions. The first block is every
// permission with protectionLevel "dangerous" in the platform manifest of
// Debian's android-framework-res 10.0.0+r36 (API 29), read with
// `aapt dump xmltree framework-res.apk AndroidManifest.xml`. The second block
// was added to the platform after API 29 (AOSP frameworks/base
// core/res/AndroidManifest.xml; developer.android.com "Permissions used only
// in default handlers" / the Manifest.permission reference), with the API
// level that introduced each.
const API_29 = [
  "android.permission.READ_CONTACTS",
  "android.permission.WRITE_CONTACTS",
  "android.permission.READ_CALENDAR",
  "android.permission.WRITE_CALENDAR",
  "android.permission.SEND_SMS",
  "android.permission.RECEIVE_SMS",
  "android.permission.READ_SMS",
  "android.permission.RECEIVE_WAP_PUSH",
  "android.permission.RECEIVE_MMS",
  "android.permission.READ_CELL_BROADCASTS",
  "android.permission.READ_EXTERNAL_STORAGE",
  "android.permission.WRITE_EXTERNAL_STORAGE",
  "android.permission.ACCESS_MEDIA_LOCATION",
  "android.permission.ACCESS_FINE_LOCATION",
  "android.permission.ACCESS_COARSE_LOCATION",
  "android.permission.ACCESS_BACKGROUND_LOCATION",
  "android.permission.READ_CALL_LOG",
  "android.permission.WRITE_CALL_LOG",
  "android.permission.PROCESS_OUTGOING_CALLS",
  "android.permission.READ_PHONE_STATE",
  "android.permission.READ_PHONE_NUMBERS",
  "android.permission.CALL_PHONE",
  "com.android.voicemail.permission.ADD_VOICEMAIL",
  "android.permission.USE_SIP",
  "android.permission.ANSWER_PHONE_CALLS",
  "android.permission.ACCEPT_HANDOVER",
  "android.permission.RECORD_AUDIO",
  "android.permission.ACTIVITY_RECOGNITION",
  "android.permission.CAMERA",
  "android.permission.BODY_SENSORS",
  "android.permission.GET_ACCOUNTS",
];

const AFTER_API_29 = [
  "android.permission.BLUETOOTH_SCAN", // 31
  "android.permission.BLUETOOTH_ADVERTISE", // 31
  "android.permission.BLUETOOTH_CONNECT", // 31
  "android.permission.UWB_RANGING", // 31
  "android.permission.POST_NOTIFICATIONS", // 33
  "android.permission.NEARBY_WIFI_DEVICES", // 33
  "android.permission.READ_MEDIA_IMAGES", // 33
  "android.permission.READ_MEDIA_VIDEO", // 33
  "android.permission.READ_MEDIA_AUDIO", // 33
  "android.permission.BODY_SENSORS_BACKGROUND", // 33
  "android.permission.READ_MEDIA_VISUAL_USER_SELECTED", // 34
];

export const DANGEROUS_PERMISSIONS: ReadonlySet<string> = new Set([...API_29, ...AFTER_API_29]);

export const DANGEROUS_PERMISSIONS_SOURCE =
  "platform permissions with protectionLevel=dangerous: Debian android-framework-res 10.0.0+r36 (API 29) plus those added in API 31-34";
