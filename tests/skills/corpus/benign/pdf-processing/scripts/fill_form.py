"""Fill a PDF form from a JSON file of field values."""

import json
import sys


def main() -> None:
    source, values, target = sys.argv[1:4]
    with open(values) as handle:
        fields = json.load(handle)
    print(f"filling {len(fields)} fields of {source} into {target}")


if __name__ == "__main__":
    main()
