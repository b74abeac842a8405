"""Stand-in for the `ddsketch` package (Datadog's quantile sketch), absent from Debian."""
