# Every time people read in the console is in one format with its zone (issue 32): a reminder was shown
# as four different times. personas.times.shown renders the same format for values Django does not.
DATETIME_FORMAT = "Y-m-d H:i T"
SHORT_DATETIME_FORMAT = DATETIME_FORMAT
DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = DATE_FORMAT
TIME_FORMAT = "H:i T"
