/**
 * Whether the `OTEL_*` variables turn OpenTelemetry on, apart from the
 * exporter itself (src/ops/telemetry.ts, re-exported there): a server asks
 * this at start and loads telemetry's modules only when the answer is yes.
 *
 * @module
 */

/** Thrown for an `OTEL_*` setting weir cannot honour (start-up refuses). */
export class TelemetryConfigError extends Error {}

/**
 * Whether the environment turns telemetry on.
 * @throws {TelemetryConfigError} for a protocol other than `http/json`, or an unknown exporter
 */
export function telemetryWanted(env: (name: string) => string | undefined): boolean {
  if ((env("OTEL_SDK_DISABLED") ?? "").trim().toLowerCase() === "true") return false;
  const selectors = ["OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"].map((n) =>
    (env(n) ?? "").trim().toLowerCase()
  );
  for (const [i, s] of selectors.entries()) {
    if (s !== "" && s !== "otlp" && s !== "none") {
      throw new TelemetryConfigError(
        `${i ? "OTEL_METRICS_EXPORTER" : "OTEL_TRACES_EXPORTER"}=${s}: weir exports otlp or none`,
      );
    }
  }
  const endpoint = ["", "TRACES_", "METRICS_"].some((k) =>
    (env(`OTEL_EXPORTER_OTLP_${k}ENDPOINT`) ?? "") !== ""
  );
  const on = endpoint || selectors.includes("otlp");
  if (!on || selectors.every((s) => s === "none")) return false;
  for (const k of ["", "TRACES_", "METRICS_"]) {
    const protocol = (env(`OTEL_EXPORTER_OTLP_${k}PROTOCOL`) ?? "").trim();
    if (protocol !== "" && protocol !== "http/json") {
      throw new TelemetryConfigError(
        `OTEL_EXPORTER_OTLP_${k}PROTOCOL=${protocol}: weir exports OTLP over HTTP as JSON; ` +
          `set http/json or leave it unset`,
      );
    }
  }
  return true;
}
