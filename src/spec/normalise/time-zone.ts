/**
 * Time zones: IANA names only ("Europe/London", "UTC"). Node's ICU also accepts legacy names
 * and abbreviations, some of them misleadingly: "BST" resolves to Asia/Dhaka, not London, and
 * "EST" to a fixed offset without daylight saving. A window must open when its author meant,
 * so these are refused with the zone they most likely meant.
 */

/** Legacy names and abbreviations → the IANA zone people usually mean by them. */
const MEANT: Readonly<Record<string, string>> = {
  PST: 'America/Los_Angeles',
  PDT: 'America/Los_Angeles',
  PST8PDT: 'America/Los_Angeles',
  'US/Pacific': 'America/Los_Angeles',
  MST: 'America/Denver (or America/Phoenix, without daylight saving)',
  MDT: 'America/Denver',
  MST7MDT: 'America/Denver',
  'US/Mountain': 'America/Denver',
  'US/Arizona': 'America/Phoenix',
  CST: 'America/Chicago (or Asia/Shanghai for China)',
  CDT: 'America/Chicago',
  CST6CDT: 'America/Chicago',
  'US/Central': 'America/Chicago',
  EST: 'America/New_York',
  EDT: 'America/New_York',
  EST5EDT: 'America/New_York',
  'US/Eastern': 'America/New_York',
  AKST: 'America/Anchorage',
  AKDT: 'America/Anchorage',
  HST: 'Pacific/Honolulu',
  'US/Hawaii': 'Pacific/Honolulu',
  BST: 'Europe/London',
  GB: 'Europe/London',
  WET: 'Europe/Lisbon',
  'GB-Eire': 'Europe/London',
  GMT: 'UTC (or Europe/London for UK time)',
  UCT: 'UTC',
  Zulu: 'UTC',
  Universal: 'UTC',
  Greenwich: 'UTC',
  Z: 'UTC',
  IST: 'Asia/Kolkata (or Europe/Dublin for Irish time)',
  Eire: 'Europe/Dublin',
  CET: 'Europe/Berlin, Europe/Paris or another city in your zone',
  CEST: 'Europe/Berlin, Europe/Paris or another city in your zone',
  MET: 'Europe/Berlin',
  EET: 'Europe/Athens, Europe/Helsinki or another city in your zone',
  EEST: 'Europe/Athens',
  JST: 'Asia/Tokyo',
  Japan: 'Asia/Tokyo',
  KST: 'Asia/Seoul',
  ROK: 'Asia/Seoul',
  PRC: 'Asia/Shanghai',
  ROC: 'Asia/Taipei',
  Hongkong: 'Asia/Hong_Kong',
  Singapore: 'Asia/Singapore',
  AEST: 'Australia/Sydney',
  AEDT: 'Australia/Sydney',
  ACST: 'Australia/Adelaide',
  AWST: 'Australia/Perth',
  NZ: 'Pacific/Auckland',
  NZST: 'Pacific/Auckland',
  NZDT: 'Pacific/Auckland',
};

/** The regions of the IANA database's geographic zones, and Etc for UTC and fixed offsets. */
const IANA_NAME =
  /^(?:Africa|America|Antarctica|Arctic|Asia|Atlantic|Australia|Europe|Indian|Pacific)\/[A-Za-z0-9_+-]+(?:\/[A-Za-z0-9_+-]+)*$|^Etc\/(?:UTC|GMT(?:[+-]\d{1,2})?)$|^UTC$/;

// Building a DateTimeFormat costs tens of microseconds; a large repository names few zones many times.
const resolvedZones = new Map<string, string | undefined>();

function resolved(tz: string): string | undefined {
  if (resolvedZones.has(tz)) return resolvedZones.get(tz);
  let zone: string | undefined;
  try {
    zone = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    zone = undefined;
  }
  if (resolvedZones.size < 1000) resolvedZones.set(tz, zone);
  return zone;
}

/** What is wrong with `tz` as a window's time zone, or undefined when it is an IANA zone. */
export function timeZoneProblem(tz: string): { message: string; hint: string } | undefined {
  const legacy = (hint: string): { message: string; hint: string } => ({
    message: `${JSON.stringify(tz)} is a legacy name, not an IANA time zone`,
    hint: `write the IANA zone, e.g. ${hint}`,
  });
  const meant = MEANT[tz] ?? MEANT[tz.toUpperCase()];
  if (meant !== undefined) return legacy(meant);
  // Newer ICU (Node 26) takes a UTC offset such as "+01:00" as a zone, older ICU does not; an
  // offset has no daylight-saving rules, so it is refused alike on every runtime.
  if (/^[+\-\u2212]\d/.test(tz))
    return {
      message: `${JSON.stringify(tz)} is a UTC offset, not an IANA time zone`,
      hint: 'write a zone name like UTC, Europe/Berlin or America/New_York',
    };
  const known = resolved(tz);
  if (known === undefined)
    return {
      message: `${JSON.stringify(tz)} is not an IANA time zone`,
      hint: 'write a zone name like UTC, Europe/Berlin or America/New_York',
    };
  if (known !== tz && known.toLowerCase() === tz.toLowerCase())
    return { message: `${JSON.stringify(tz)} is not spelt as the IANA zone`, hint: `write ${known}` };
  if (IANA_NAME.test(tz)) return undefined;
  return legacy(IANA_NAME.test(known) ? known : 'UTC, Europe/Berlin or America/New_York');
}
