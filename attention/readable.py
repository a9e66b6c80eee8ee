def readable_tokens(tokens, byte_level):
    return tuple(tokens)
