/** Every string, or every number, in a value with its path ("$.a[0].b"), for assertions over whole results. */
function leaves<T>(is: (v: unknown) => v is T) {
  const walk = (v: unknown, at = '$', out: Array<[string, T]> = []): Array<[string, T]> => {
    if (is(v)) out.push([at, v]);
    else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}[${i}]`, out));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${at}.${k}`, out);
    return out;
  };
  return walk;
}

export const strings = leaves((v): v is string => typeof v === 'string');
export const numbers = leaves((v): v is number => typeof v === 'number');
