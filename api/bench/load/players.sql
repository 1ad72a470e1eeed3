-- Append the rows of one CSV file (columns in table order, text, \N for NULL) to players.
INSERT INTO players
SELECT * FROM read_csv($path, header = false, all_varchar = true, delim = ',', quote = '"',
                       escape = '"', nullstr = '\N', auto_detect = false, columns = $columns)
