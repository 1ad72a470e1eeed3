-- Append the rows of one CSV file (columns in the order of the table, every value as text,
-- \N for NULL) to half_facts; DuckDB casts each value to the column's type.
INSERT INTO half_facts
SELECT * FROM read_csv($path, header = false, all_varchar = true, delim = ',', quote = '"',
                       escape = '"', nullstr = '\N', auto_detect = false, columns = $columns)
