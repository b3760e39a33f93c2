// New workspace IDs. Apart from names.ts because nanoid loads node:crypto,
// which listing (the path that must start fast) never needs.
import {customAlphabet} from 'nanoid'
import {ID_ALPHABET, ID_LENGTH} from './names.js'

export const newId = customAlphabet(ID_ALPHABET, ID_LENGTH)
